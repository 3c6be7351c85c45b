// What a TOML file's parse error says, for the one-line errors of scenario
// files and the expected matrix. toml++'s own text for a key given twice is
// garbled ("cannot redefine existing integer '"amamount" '"): that case is
// said from the file's line instead.
#pragma once

#include <string>

#include <toml++/toml.h>

namespace twice::gateway {

// "FILE:LINE: not valid TOML: <what>" (the description, or for a key given
// twice "the key 'amount' is given twice in its table: keep one").
std::string toml_error_text(const std::string& path, const toml::parse_error& e);

}  // namespace twice::gateway
