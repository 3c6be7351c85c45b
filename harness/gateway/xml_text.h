// XmlText: the text of one child element of an XML document's root, as an
// XML reader gives it: character data and CDATA sections joined, character
// references decoded, the whitespace around it trimmed. WeChat Pay v2 reads
// its ack this way (<xml><return_code>SUCCESS</return_code></xml>, with or
// without CDATA), so the gateway reads the merchant's reply so too, not as a
// byte pattern. Enough XML for that: declarations, comments, DOCTYPE,
// attributes and nesting are skipped, not validated. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace twice::gateway {

// The text of the first element named `child` directly inside the root
// element of `xml`; nullopt when there is none, when that element holds
// elements rather than text, or when `xml` is not one XML element (text
// outside the root, an unclosed tag).
std::optional<std::string> xml_child_text(std::string_view xml, std::string_view child);

}  // namespace twice::gateway
