#!/usr/bin/env python3
"""An independent check of twice's wire formats: a small shop that verifies
each gateway's notify with the gateway's documented algorithm, written with
Python's `cryptography` and `hmac` (none of twice's code), credits the ones
that verify (once per transaction, idempotently) and refuses the rest.

  Stripe     Stripe-Signature t=..,v1=hex HMAC-SHA256("t.body", endpoint secret)
  WeChat v3  base64 RSA-SHA256 PKCS#1 v1.5 over "ts\\nnonce\\nbody\\n" with the
             platform public key; resource AES-256-GCM under the APIv3 key
  Alipay     RSA2: base64 RSA-SHA256 over the sorted k=v&... of every
             parameter but sign and sign_type; total_amount in yuan
  Adyen      base64 HMAC-SHA256(hex key) of psp:original:merchant:reference:
             value:currency:eventCode:success
  PayPal     base64 SHA256withRSA (PKCS#1 v1.5) over "transmission_id|
             transmission_time|webhook_id|crc32(body)" (crc32 in decimal),
             checked with the X.509 certificate fetched from PAYPAL-CERT-URL
             (only the gateway's own loopback address is trusted); or, with
             --paypal-verify-api, by asking the gateway's
             verify-webhook-signature API

It writes what it accepted and refused to --stats-file after each request.
--accept-anything skips verification: the shop a forger wants, which twice
must catch (a forged notify credits an order nobody paid: unpaid_credit).
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import sqlite3
import threading
import time
import urllib.parse
import urllib.request
import zlib
from decimal import Decimal

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from flask import Flask, request
from werkzeug.serving import make_server

app = Flask(__name__)
ARGS = None
STATS = {"accepted": 0, "refused": 0, "ignored": 0, "reasons": {}}
LOCK = threading.Lock()


class Refused(Exception):
    pass


def key(name):
    with open(os.path.join(ARGS.keys_dir, name), "rb") as f:
        return f.read().strip()


def rsa_verify(pem_name, signature_b64, message):
    if ARGS.accept_anything:
        return
    public_key = serialization.load_pem_public_key(key(pem_name))
    try:
        public_key.verify(base64.b64decode(signature_b64), message, padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, ValueError):
        raise Refused("bad RSA signature")


def stripe():
    body = request.get_data()
    fields = dict(p.split("=", 1) for p in request.headers.get("Stripe-Signature", "").split(",") if "=" in p)
    if not ARGS.accept_anything:
        mac = hmac.new(key("stripe_webhook_secret"), fields.get("t", "").encode() + b"." + body, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(mac, fields.get("v1", "")):
            raise Refused("bad Stripe signature")
        if abs(time.time() - int(fields["t"])) > 300:
            raise Refused("stale Stripe timestamp")
    event = json.loads(body)
    if event["type"] != "payment_intent.succeeded":
        return None, ("", 200)
    o = event["data"]["object"]
    return (o["metadata"]["order_no"], o["id"], int(o["amount"]), o["currency"].upper()), ("", 200)


def wechat():
    body = request.get_data()
    h = request.headers
    if not ARGS.accept_anything and h.get("Wechatpay-Serial", "").encode() != key("wechatpay_serial"):
        raise Refused("unknown platform serial")
    message = h["Wechatpay-Timestamp"].encode() + b"\n" + h["Wechatpay-Nonce"].encode() + b"\n" + body + b"\n"
    rsa_verify("wechatpay_platform_public.pem", h["Wechatpay-Signature"], message)
    event = json.loads(body)
    ok = (json.dumps({"code": "SUCCESS"}), 200)
    if event["event_type"] != "TRANSACTION.SUCCESS":
        return None, ok
    r = event["resource"]
    try:
        plain = AESGCM(key("wechatpay_apiv3_key")).decrypt(r["nonce"].encode(), base64.b64decode(r["ciphertext"]),
                                                           r["associated_data"].encode())
    except InvalidTag:
        raise Refused("resource does not decrypt")
    t = json.loads(plain)
    return (t["out_trade_no"], t["transaction_id"], int(t["amount"]["total"]), t["amount"]["currency"]), ok


def alipay():
    params = dict(urllib.parse.parse_qsl(request.get_data(as_text=True), keep_blank_values=True, strict_parsing=True))
    signature = params.pop("sign", "")
    if params.pop("sign_type", "") != "RSA2":
        raise Refused("sign_type is not RSA2")
    content = "&".join(f"{k}={params[k]}" for k in sorted(params))
    rsa_verify("alipay_public_key.pem", signature, content.encode("utf-8"))
    if params["trade_status"] not in ("TRADE_SUCCESS", "TRADE_FINISHED"):
        return None, ("success", 200)
    fen = int(Decimal(params["total_amount"]) * 100)
    return (params["out_trade_no"], params["trade_no"], fen, "CNY"), ("success", 200)


def adyen():
    item = json.loads(request.get_data())["notificationItems"][0]["NotificationRequestItem"]
    fields = [item["pspReference"], item["originalReference"], item["merchantAccountCode"], item["merchantReference"],
              str(item["amount"]["value"]), item["amount"]["currency"], item["eventCode"], item["success"]]
    if not ARGS.accept_anything:
        mac = base64.b64encode(hmac.new(bytes.fromhex(key("adyen_hmac_key").decode()), ":".join(fields).encode(),
                                        hashlib.sha256).digest()).decode()
        if not hmac.compare_digest(mac, item["additionalData"]["hmacSignature"]):
            raise Refused("bad Adyen hmacSignature")
    if item["eventCode"] != "AUTHORISATION":
        return None, ("[accepted]", 200)
    return (item["merchantReference"], item["pspReference"], int(item["amount"]["value"]),
            item["amount"]["currency"]), ("[accepted]", 200)


# Loopback only, and never through a proxy the environment may name.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def paypal():
    body = request.get_data()
    h = request.headers
    if not ARGS.accept_anything:
        if h.get("PAYPAL-AUTH-ALGO") != "SHA256withRSA":
            raise Refused("PAYPAL-AUTH-ALGO is not SHA256withRSA")
        cert_url = h.get("PAYPAL-CERT-URL", "")
        if not cert_url.startswith("http://127.0.0.1:"):  # the gateway's own host, as PayPal's SDKs insist
            raise Refused("certificate not from the gateway")
        webhook_id = key("paypal_webhook_id").decode()
        if ARGS.paypal_verify_api:
            api = cert_url.split("/v1/")[0] + "/v1/notifications/verify-webhook-signature"
            question = {"auth_algo": h["PAYPAL-AUTH-ALGO"], "cert_url": cert_url,
                        "transmission_id": h["PAYPAL-TRANSMISSION-ID"], "transmission_sig": h["PAYPAL-TRANSMISSION-SIG"],
                        "transmission_time": h["PAYPAL-TRANSMISSION-TIME"], "webhook_id": webhook_id,
                        "webhook_event": json.loads(body)}
            answer = HTTP.open(urllib.request.Request(api, data=json.dumps(question).encode(),
                                                      headers={"Content-Type": "application/json"}), timeout=10)
            if json.load(answer).get("verification_status") != "SUCCESS":
                raise Refused("verify-webhook-signature: FAILURE")
        else:
            cert = x509.load_pem_x509_certificate(HTTP.open(cert_url, timeout=10).read())
            signed = "|".join([h["PAYPAL-TRANSMISSION-ID"], h["PAYPAL-TRANSMISSION-TIME"], webhook_id,
                               str(zlib.crc32(body))]).encode()
            try:
                cert.public_key().verify(base64.b64decode(h["PAYPAL-TRANSMISSION-SIG"]), signed, padding.PKCS1v15(),
                                         hashes.SHA256())
            except (InvalidSignature, ValueError):
                raise Refused("bad PayPal signature")
    event = json.loads(body)
    if event["event_type"] != "PAYMENT.CAPTURE.COMPLETED":
        return None, ("", 200)
    r = event["resource"]
    fen = int(Decimal(r["amount"]["value"]) * 100)
    return (r["custom_id"], r["id"], fen, r["amount"]["currency_code"]), ("", 200)


def credit(order_no, transaction_id, amount, currency):
    conn = sqlite3.connect(ARGS.db, timeout=30, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        row = conn.execute("SELECT user_id, amount, currency FROM orders WHERE order_no = ?", (order_no,)).fetchone()
        if row is None or row[1] != amount or row[2] != currency:
            conn.execute("ROLLBACK")
            raise Refused("order, amount or currency does not match")
        try:
            conn.execute("INSERT INTO callback_log (transaction_id, order_no) VALUES (?, ?)", (transaction_id, order_no))
        except sqlite3.IntegrityError:
            conn.execute("ROLLBACK")
            return
        conn.execute("UPDATE orders SET status = 'PAID' WHERE order_no = ?", (order_no,))
        conn.execute("UPDATE accounts SET balance = balance + ? WHERE user_id = ?", (amount, row[0]))
        conn.execute("INSERT INTO ledger (order_no, user_id, amount) VALUES (?, ?, ?)", (order_no, row[0], amount))
        conn.execute("COMMIT")
    finally:
        conn.close()


def count(kind, reason=None):
    with LOCK:
        STATS[kind] += 1
        if reason:
            STATS["reasons"][reason] = STATS["reasons"].get(reason, 0) + 1
        with open(ARGS.stats_file + ".tmp", "w") as f:
            json.dump(STATS, f)
        os.replace(ARGS.stats_file + ".tmp", ARGS.stats_file)


@app.post("/notify")
def notify():
    h = request.headers
    if "PAYPAL-TRANSMISSION-SIG" in h:
        parse = paypal
    elif "Wechatpay-Signature" in h:
        parse = wechat
    elif "Stripe-Signature" in h:
        parse = stripe
    elif request.content_type and request.content_type.startswith("application/x-www-form-urlencoded"):
        parse = alipay
    else:
        parse = adyen
    try:
        payment, answer = parse()
        if payment is None:
            count("ignored")
            return answer
        credit(*payment)
    except Refused as e:
        count("refused", str(e))
        return json.dumps({"code": "FAIL", "message": str(e)}), 401
    count("accepted")
    return answer


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("--db", required=True)
    p.add_argument("--keys-dir", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--stats-file", required=True)
    p.add_argument("--accept-anything", action="store_true")
    p.add_argument("--paypal-verify-api", action="store_true",
                   help="check PayPal's signatures with the gateway's verify-webhook-signature API, not the certificate")
    ARGS = p.parse_args()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    with open(ARGS.port_file + ".tmp", "w") as f:
        f.write(str(server.server_port))
    os.replace(ARGS.port_file + ".tmp", ARGS.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
