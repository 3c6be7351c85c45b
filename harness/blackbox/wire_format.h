// The wire formats black-box mode sends: gateway/wire_format.h, where they
// live since simulation builds the same requests (twice::wire()); named here
// for black-box mode's code.
#pragma once

#include "gateway/wire_format.h"

namespace twice::blackbox {

using gateway::base64;
using gateway::encode;
using gateway::form_escape;
using gateway::has_wire_format;
using gateway::hmac_sha256;
using gateway::rsa_sha256_base64;
using gateway::wire_formats;
using gateway::paypal_signed_text;
using gateway::rsa_sha256_verify;
using gateway::crc32;
using gateway::yuan;

}  // namespace twice::blackbox
