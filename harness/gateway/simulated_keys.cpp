#include "gateway/simulated_keys.h"

#include <cstdio>
#include <cstdlib>

#include <openssl/bio.h>
#include <openssl/pem.h>

namespace twice::gateway {
namespace {

// Four RSA 2048 test keys made once with `openssl genpkey` (and PayPal's
// self-signed certificate, `openssl req -x509 -days 36500`) and fixed here:
// a generated key would differ run to run, and so would every signature.
// They sign simulated notifies only; nobody's real key.
constexpr char kWechatPlatformPem[] = R"pem(-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDoIsd9QKWiJCLE
zXEDzr5tx2HkpCbepbXBsI3yqu5VkHCXDj6NI0PhKhks5dMRKoQ/oHKg5lKB/KML
RHy+q0+STyT+Jyh9H6V3ORzUdDc2s0mMQXLFbC3OIAE53qC4vxLGInd6hDxeHsKc
L+CHsx1Z8aPDc99LbNGq25xmEyvDDhNbRaIS9OTD7llmBiYawIqZMbMgi+Q3DS+U
u1OgRap9W0cMUZZ+ySZEwD1bKoupe7B7hmgOnv2pzWBGbKMjWxSHkEeKG9RxEFE0
q8zHsLp+wrf8Gsjsy/wrusQes0/sQSCSFMZNgY2L3mTeuD4Ia8lV7EW8S9uk9Q4n
90kHaniNAgMBAAECggEACT6pVzGl5wktYU0VPSOUreaM3YA0FBXhYS9Y19s61qmD
8mAc2Z4X6/WzPviAKWTaE3aeWg4SJx8aly5JEYbdCmSggoaotCL4ggECRuvB7ynA
uhc5LOecA2N+6QEWwYTKiJ2CyJxPkygCdBnsBTt65cQb04Lf168jwnwwhFgrG/92
FbxBN0wSYdXewvYk5KiyoupTsXZL4qTE9LcsFR6E7EdKnaTiKHcwXxh0a7WEfkDN
QFZse2JD7mIskU+fpyfjS8KnqlOhFiMUjiDd5mA71BGi+chnUUPBqv0y7nOZqatY
vZFvvYUg/8MoNUESv6YLMjucp6sXlCNeNw06wSEBOQKBgQD5ouC/2BLJrnNJutqc
ZmCSyHB6ZsOj9mb1fUZYP9p687RE+Rx5G4Melejv6awRbaKLP4LzNJ5Y4HWBjJU9
ZnfKhzls3aCiskyG/SEEN5gIPun+ph0silVGAm9aj08dS0ABm2QNUyx7f0pZSQe0
A9A/D9eM+HwylREt1/lKPpFlWwKBgQDuDbGwQD/n5Jwntz5iZGDSYpwWBkn7gFcD
m3dB9/98KVAEiJC+s8RHzVy+ndWOdi3wWnOVoW7C7s0V5lpX7fmbpFdNiEJc7Nka
uUQo9LfE2xGCqWxWlMYRgLNjtZeVLVyxBP5G6Pv1hGwHnvrjAfrLkh12VZbYagjq
3Um8P422NwKBgQDHnIoCXRCI3EmrhxIPRX2rYUMvXMTLctfZLJb3MffNoNlg3aD6
5hjueAiO7lZ8iSIUHnDjcAu+HZ1YPcWIF0tqUr6EYqNz9QZkWjvwV1PmJAiPatyh
JOwS0xefXkBwuB8yKcLTNNK43Yvh4RebxgDarBw7yOXmvHPEKJJZ37X7SQKBgAuH
ckGc+vtaIQ3zW/wb7GyEBhcy+sZJcu1jzCTPw/nZblyp2IjD4A+yLHm23y7lHlhz
qQFoLhsWwav72ghEKECXdvr0THJ/rgwTSO/K2lOYYIK5fdu7nNQgLY/4rXy2E7Un
DsGUaw96+FhuJKx13hWZ3/9pKcMVb5UgXn/VfCGFAoGBAKzUygxRdYrvr8zj7VeI
1NtDTSxLECl/voHTpK9OcrNMzsqHoBshw78loOzGqRdoZr/4VIfGa5PoOHmOiKo+
Z50Gnq+Hs4p89J4vcryTMEUOBTBFmTYyNC65AAWCDizV/iPj9MiSZeLQbr7Scqib
AjUK8EdERG6xsUPjy3d2jH0P
-----END PRIVATE KEY-----
)pem";
constexpr char kAlipayPem[] = R"pem(-----BEGIN PRIVATE KEY-----
MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQCef49eqHg67+6a
43miJTcFSur5PnPPWj89rRrA5IK8rFl0z4JtGPClorXlMz4mZuioCH2j2zUTrSlA
IljV4g0LUxJ4B3ZtT9DguTdA+Z0XjFwrTKBKgMmI02RQTZUJrL1vnUgny6mcelHH
nLq0TBJcsW/WmzGrmdLBLKaDCBzLrmuF17f3TC+m6KzmRAxVTHCMMWJW7GORYLuq
B8kf/Biv4kvf6XM99CQiVc8fV8p6/ef7bOFVmcwTkukZ2GwzmCWCLZYNqOmVP5i5
UkLfcyZU2vaj3Tmz7MoKYqABMtVgJAlHl4aIWZqs0sJiukeCiDor+Qy8LU6W27R6
VB2Q6peVAgMBAAECggEAEQ/sUCVUpAuWJQhd3K2i6afx+ZjWgLjXW/1ZhvBSfpsT
GjcIdFQd+8azTBQjGaE0ZHpdhBkh8pdOfH/2DjhCbTipIVC0V/oioz5tC0qTtag/
d83M55hLmbYf82EWrS7ySaSl0trizFyClzlxA924kE/tmS2lwDJT9MWouyxRZT+a
+rpkv5cVk7JBG5o4ZPMpO2w3Jcfp74nnRlLWHHNuaDaePhCkcl2e3e3g2Xosi/az
3PlLcL1ne2xUMC3Hn90we4jhzk22nuJ6Dhed2g8gV5346u3DHhxVTyVItjGMqUWc
LA9jCD9CQ32NyYYwNAFp/Zll6sITE5BWggtWmWN2dQKBgQDcRKI+4CtS8msyRPp5
bdgX5U6T+ZkskMUWtQcQrdavOVNy9ofbi66yg59ieA2cj/l0/pziZQ8xw569Udm5
7/5bB9B0MgQ7gJNyKc+Ibrw6lFcowW7kBqdxGtIa7T1rJGshS+UQ97JIQhsg2A2K
S6Oq5ckBWkqNs6ztLhOI4LrFswKBgQC4NbqXGYeCk+lBqmtt2YAYsbgmJCv/5z/r
WCINRdtt5ydOTzRvDi6cfY5fUtB5Y3qajSdbuPTXUN4oyY5vAIzljr5UuYPqjGCk
FzJ3CDXx24Aesp4DYlLCE4C0ROZAp9h+1l/eQ64EMVGoCLv9QLQ59uybEg5gKUXa
n+XXdwiZlwKBgEGhNZJ0apQ5ZNVCljruDq/4A/S1Lv2HWSIN6EAA+/GTrBiZ+hrh
QLkx3KCTUsLuZw6D+qy+HcvfFIImTDBJoMjwyByG9pngEo62hH6LOAxgPKQJFohc
rzFVI3sgaudsn3r5SRRIKVe8UqbzmP020lpOQxjjFUmpWoIE848aHqxfAoGAbgq6
snTvvJN7blzN3Etn+FiCN1a4aiDM0FxPyzoGATtrAZ7TJdyE/7sJh+xC2aERpq3X
6zUsHkwSyq7NRYZApQmGrbo9EapWOPAal3zyLM8BVFVDi6X65jEcW5QlME6USADs
OCyaEascqpK9Kmayw0W8xk4dBFjjf9yxQuu62XUCgYBMm4ezgHJ1Ws3iDcruAZkY
9bXuZ7kORh1jXR5Kc9E/UHcqcuugI4PvxSnsPeYF0miXGhJkh3RD3j9dm+ubx8zy
0SEhLdkPrTfjIjyV6rNPS8FZ0YTRt7BNqW5f0Db4K1mAsB37NqvGenSs16g4/ogq
/k84WprKr8HUgyE85NAv/A==
-----END PRIVATE KEY-----
)pem";
constexpr char kForgerPem[] = R"pem(-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDlDOoVUhBfgRc/
HnqdjrMjkVBk60bizdZzlbnaaOgbLFeLicqh2UD/UR9lJ1cZIicdqz7nqq1OWpTK
CabO0RFR1PlGgibYWPBO2eWCl4qXaWtTbwKj0p5mBPRhkiOs6l5/rWpZ1U9iVEvu
b1scBB8C6MkaB/wGR2VFF9rKhZ7cLXZI6eMS6k7y8+l6xwNX0thYLhXpl3EFB3lB
Td6nT9arDexppGQq0KPYyP4aiSQsqtFAtE5x+9XNGlVXL/5ZObzlgm6iI7ID3fBi
Vv508fMAwb2/YNSI9vOs2D5AIFtx3VHMRS2Qk4rM9MTDPajBTsZhIzbYR3Bqwxj/
zRVpfObNAgMBAAECggEANzrzt+PjoE/NpfHowZSu8/jecJM98sMM/q6AE97/dsvs
qTA23Ot4zYfHYPoJOb1/Ppt0DeMdKntTjNsibpTBjyCiYgLQsJLTkUPf4Gs/py5r
i4EFWzDWcoWn0t4s/Y0+750Ge7Zgj7aBX7NYvgrtWmN82GrL9cyh6fTsVDC/o1nb
LK8HHW6VqOKeZ79WbucuH/5TvubVOKXzwQcTstvsxgu3idmVYlcXeH5Bk17PrncI
nTtAkgVTRhwY4WPifOuBlfn/wtlOrEEX/QRlu+CTpXxBhivBv+Rs86PbVKwuxI5p
a9iDET1CUHpC2yXujErrsiLKWIemG5fC8ungWMW9CQKBgQD43ySQyu/WhbskeeWl
EPOuMCRHANs4JW3CHI5JZ7uUff+re79hrMqmNPZv6LtQ+rRTq1kbcy11usppOkHJ
1pLCJ0J0qSeO/Q8nY2vl4fej5ZD7mx7kOYyAe4zpadWNqzqkQrBjp6rPXZYHKuPA
6vLCNhfHMyMglUQ/RATiFSS8dQKBgQDrnG6eqM8XFDppxNHtUP+vZW6UJzItqd4D
1VP16b8786Tgj2ZQ651mgNsUVY8AbKFz89O4XPbxU8oa0SXisFPThReGpjk4toSF
kAuZx1FsLfzd0e0T6ze/VY1k8Gn9PcLc7wEvuqEcxGWoEjuwohh62Kg+3dpi45Zb
CnRoRpwV+QKBgGfQXWZw4P8xpdEfcCYdHilJN7jOqKORKWnRk6EXPm5A6QfVhQ3v
kFEowqwH/ytWiSZl0bPbpdj4ZDrk7FCPy4Rl8BjN/wxsj4e0t2ubiTu7JXFvUcGO
KAfoge1UEpsYFEw07XOEm4II3e57e6ob18wf2Gdl839CBMgHTaope7uJAoGAXCce
OR4riYpW4oGh3iFdMBwLKRU/kg6rkHJC2Z8oNemw5kgQK7xMHwhtJ8HjIbZbW7/V
Ynmx+GfeV6jQGZ7/2m5m6jpfjSgOIzNY5jfIR/igu53dDXplnod2uzExM2SRr9on
a6SiWV8Tp64h/I8Z5gqRm60oOp9rcoZfS126tPkCgYEA71Si6wOdVZcBeF8EI0tV
+cIj13T4+yxHLw09viyFS/wt5MkVh5IzPcw1YpIqgfkRRX8+nMd0w/60apSvSNfq
6MpaXsh6E5cxhqmVXJCr8Zi9/CfNUW/S7xA2r73JMrwZ2LkYD1mV4JOc8BB8i4Bf
m6YiMGQBfkY31k3cHhyyem0=
-----END PRIVATE KEY-----
)pem";
constexpr char kPaypalPem[] = R"pem(-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQCoyoUQfbsSIro8
qsrBcEussHvjvMqUw/eEmv5tTvvRmo+WEnUiqEKE+FfISRN4I3r52GnWuV2MkMY/
BUdSYW91yFQNLRKBYyKVygOHpedzffx2SqpjUzlq9PyZVZxBK3hilGAsqrm4OR8x
XbbJugLLpnDaqhwLHGFRnQInmsL2c0aLiComFyRBs6M8geqXmKHHdawFcWwpKM0u
K5sGnG+zn9r+i4SmrtQ4qTBZbCjch0QA1EWkouNHUEX4VI6mdKB7G5I4awCH+SMu
/ej3bg9i5/dHZwrzpdPIeWcAZLkMELrU5l0mRn6M/JWSms0MJ9F/bAvcchyrL8uE
/5WnMT4/AgMBAAECggEAFj4x5igbdIVdCMzyUSbM4iHpAZbfFKxKZuV3QnerxEWw
8Z7XDs0g5EhHER6y0Rx5LTQxUQQ2aWVT//lgb7ZlVh54bRAT0Ix8LJm6zgUKiMlW
cU7flfKMA3tApQLcx33ErID5t4kmq4840Ww/FTr3pAH3/JN5hJal1c0cppQaExiL
LDb/hLWB7EzSGX+/1b90XFA9Tqnvxj/KsOVZZOfBX2uv3Dyxj4XdD+RgJa++im7F
3190FYd+idb70OcWC5pUjHBGorR+ILA7q9PG7AWTY9Snm2Qn4JiV0L/hDGJjOSbT
sjeyNklQIRzhsQrr21DIcpXmWce+O8KMLYGHZa+eeQKBgQDuQsCE+XB038oErX3v
J2KPZYGnj0jSZxAfXqs/NfVDOIVWrRxd/KAPCrRK2vXZGJTi30hNag9ibt4OtYXs
v14iRP4rZCr8WlnB+MeKFBpZG/IqdZP7HeTTf6cpzUYaJxSwjixR7dU0xXPfO9aJ
NSft67kWy0mhcYj7gF94zgVh8wKBgQC1W6043tbsgqo4/C6yU24QDsJl0b7sS93S
OG8CZY+ow/PV2KfIlVhQojNNUaV3MbZk8NCvvoayI/WC689nmIZeO/q1TW75e10H
oZfDO5tEF94DmNlqxlYMuWlSTphLN+HmdRDNwMBhjLvDDsRvmr9lAPCnjWA/cRRD
aeHNfWD5hQKBgQDNwW+oZhErnSdEqt6abRS8aRhyr1Zf/Qj7TjHswJgxmNntZEmf
EM7YrpHMIxM0i/nngpNZ50Gp67xwT2p8bTbJuXMV3ccRbqUc0c7f+0RVt8CF0kwd
DE/UJeUiQFdNtnozjlPP3OfGTs4l9fLrQrBc0rhgauYHOZjmOJI6LRCQ6QKBgFwj
h44tKORgPjtVZCQVXwWpefpg5a8HnFsBcOS21JXZeDhdKmEt/wB4Z7gQkxBLoW8H
Kf8fvS8kNceeJnFrfFjEAEu8W3VEx67o2kHGNswRlCofrdYhjfZI/MlkRNtyOMLt
Fuxx0Uu+RGaFSiepZzPZlmqJ2SxiNvlJAf90g6BBAoGBAJErhbsA5DYBywAHhGVB
XzBz5HtU4ulKMoOjdRRgJuolR/SCsg4DwrcAQ48dJENKmXSHJnnLdilE8WVYjK8n
RSNPCm/7AqO/W7NaQtA1rxrbOliAhzKdaSflLDsJ+aM5SJVBYwzLiZDcRxFjdc35
jVmtahzxK059IIg85fZE9kLF
-----END PRIVATE KEY-----
)pem";
constexpr char kPaypalCertPem[] = R"pem(-----BEGIN CERTIFICATE-----
MIIDZjCCAk6gAwIBAgIBATANBgkqhkiG9w0BAQsFADBLMS8wLQYDVQQDDCZ0d2lj
ZSBzaW11bGF0ZWQgUGF5UGFsIHdlYmhvb2sgc2lnbmluZzEYMBYGA1UECgwPdHdp
Y2UgdGVzdCBrZXlzMCAXDTI2MTEzMDIzMTEyM1oYDzIxMjYxMTA2MjMxMTIzWjBL
MS8wLQYDVQQDDCZ0d2ljZSBzaW11bGF0ZWQgUGF5UGFsIHdlYmhvb2sgc2lnbmlu
ZzEYMBYGA1UECgwPdHdpY2UgdGVzdCBrZXlzMIIBIjANBgkqhkiG9w0BAQEFAAOC
AQ8AMIIBCgKCAQEAqMqFEH27EiK6PKrKwXBLrLB747zKlMP3hJr+bU770ZqPlhJ1
IqhChPhXyEkTeCN6+dhp1rldjJDGPwVHUmFvdchUDS0SgWMilcoDh6Xnc338dkqq
Y1M5avT8mVWcQSt4YpRgLKq5uDkfMV22yboCy6Zw2qocCxxhUZ0CJ5rC9nNGi4gq
JhckQbOjPIHql5ihx3WsBXFsKSjNLiubBpxvs5/a/ouEpq7UOKkwWWwo3IdEANRF
pKLjR1BF+FSOpnSgexuSOGsAh/kjLv3o924PYuf3R2cK86XTyHlnAGS5DBC61OZd
JkZ+jPyVkprNDCfRf2wL3HIcqy/LhP+VpzE+PwIDAQABo1MwUTAdBgNVHQ4EFgQU
254ay0v/tJyuQdnXzB1QGfUJj/swHwYDVR0jBBgwFoAU254ay0v/tJyuQdnXzB1Q
GfUJj/swDwYDVR0TAQH/BAUwAwEB/zANBgkqhkiG9w0BAQsFAAOCAQEAV93wUgLK
QK81PWUQOsyxtF7rEQ3oemeMdICOYiuB8khJX6fK66faZiFTQKADjHZhTYtcINST
VvJCEBGMxclePZ+6750+aTlPq8fFJAVqGhr+sAWF77B95N2zD9c93NQuBKUfqnwT
//PbF9MKeCucZr4NCcdZ5yZ+N2LrDEZHAoP8BNZqXXRauGvlHs/M7wCTWhuo29eH
N7RJJoolIMKcINn9Uc3NPATgdEiae4CqdLqic4l0fALcCDnisz9bvqtgDGFnZMR/
/ChbK1BDEwLn/lHlvUTzoNqR9V68Umn5NbawG+mi/KgEDJAd/49NWAjbYx4se2TO
pmdX0+MlMVXHTg==
-----END CERTIFICATE-----
)pem";

Pkey parse(const char* pem) {
  BIO* bio = BIO_new_mem_buf(pem, -1);
  Pkey key(PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  if (!key) {  // the constants above are part of the program: a damaged one is a bug in twice
    std::fputs("twice: a built-in test key of gateway/simulated_keys.cpp does not parse\n", stderr);
    std::abort();
  }
  return key;
}

WireKeys make_keys() {
  WireKeys k;
  k.stripe_secret = "whsec_twice_stripe";  // Gateway's secret for the stripe profile: "whsec_twice_" + profile
  k.adyen_hmac_hex = "74776963652073696d756c61746564206164796e656e20686d6163206b657921";
  k.wechat_apiv3_key = "twiceSimulatedApiV3Key0123456789";
  k.wechat_serial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
  k.wechat_platform = parse(kWechatPlatformPem);
  k.alipay = parse(kAlipayPem);
  k.paypal = parse(kPaypalPem);
  k.paypal_cert_pem = kPaypalCertPem;
  // Nothing serves it in simulation: a handler reads WireSecrets::paypal_cert_pem.
  k.paypal_cert_url = "http://127.0.0.1/v1/notifications/certs/CERT-twice-simulated";
  k.paypal_webhook_id = "8TW1CE5IMULATED0W";
  k.forger = parse(kForgerPem);
  return k;
}

}  // namespace

const WireKeys& simulated_wire_keys() {
  static const WireKeys keys = make_keys();  // parsed on first use: runs that never ask pay nothing
  return keys;
}

const WireSecrets& simulated_wire_secrets() {
  static const WireSecrets secrets = [] {
    const WireKeys& k = simulated_wire_keys();
    return WireSecrets{k.wechat_apiv3_key, k.wechat_serial, public_pem(k.wechat_platform.get()), public_pem(k.alipay.get()),
                       k.stripe_secret, k.adyen_hmac_hex, k.paypal_cert_pem, k.paypal_webhook_id};
  }();
  return secrets;
}

}  // namespace twice::gateway
