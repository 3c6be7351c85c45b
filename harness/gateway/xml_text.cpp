#include "gateway/xml_text.h"

#include <cstdint>
#include <vector>

#include "text/utf8.h"

namespace twice::gateway {
namespace {

bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Character data with its references decoded; nullopt for a reference no
// XML reader takes.
std::optional<std::string> decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    const std::size_t end = text.find(';', i);
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view ref = text.substr(i + 1, end - i - 1);
    if (ref == "lt") out += '<';
    else if (ref == "gt") out += '>';
    else if (ref == "amp") out += '&';
    else if (ref == "quot") out += '"';
    else if (ref == "apos") out += '\'';
    else if (ref.size() > 1 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      std::uint32_t cp = 0;
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      if (digits.empty() || digits.size() > 8) return std::nullopt;
      for (const char c : digits) {
        const int d = c >= '0' && c <= '9'           ? c - '0'
                      : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                    : -1;
        if (d < 0) return std::nullopt;
        cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
      }
      if (cp == 0 || cp > 0x10FFFF) return std::nullopt;
      text::append_utf8(out, static_cast<char32_t>(cp));
    } else {
      return std::nullopt;
    }
    i = end;
  }
  return out;
}

}  // namespace

std::optional<std::string> xml_child_text(std::string_view xml, std::string_view child) {
  std::vector<std::string_view> open;  // the elements not closed yet, outermost first
  bool seen_root = false;
  bool capturing = false;  // inside the first `child` of the root
  std::optional<std::string> found;  // its text, once it closed
  std::string text;
  std::size_t i = 0;
  while (i < xml.size()) {
    if (xml[i] != '<') {
      const std::size_t end = std::min(xml.find('<', i), xml.size());
      const std::string_view chunk = xml.substr(i, end - i);
      if (open.empty() && !trim(chunk).empty()) return std::nullopt;  // text outside the root element
      if (capturing) {
        const std::optional<std::string> decoded = decode(chunk);
        if (!decoded) return std::nullopt;
        text += *decoded;
      }
      i = end;
      continue;
    }
    const std::string_view rest = xml.substr(i);
    auto skip_past = [&](std::string_view close) {
      const std::size_t at = xml.find(close, i);
      if (at == std::string_view::npos) return false;
      i = at + close.size();
      return true;
    };
    if (rest.starts_with("<?")) {
      if (!skip_past("?>")) return std::nullopt;
    } else if (rest.starts_with("<!--")) {
      if (!skip_past("-->")) return std::nullopt;
    } else if (rest.starts_with("<![CDATA[")) {
      const std::size_t start = i + 9;
      if (!skip_past("]]>")) return std::nullopt;
      if (open.empty()) return std::nullopt;
      if (capturing) text += xml.substr(start, i - 3 - start);
    } else if (rest.starts_with("<!")) {
      if (!open.empty() || !skip_past(">")) return std::nullopt;  // a DOCTYPE, before the root
    } else {
      const bool closing = rest.starts_with("</");
      std::size_t j = i + (closing ? 2 : 1);
      const std::size_t name_start = j;
      while (j < xml.size() && !space(xml[j]) && xml[j] != '>' && xml[j] != '/') ++j;
      const std::string_view name = xml.substr(name_start, j - name_start);
      if (name.empty()) return std::nullopt;
      char quote = 0;  // a '>' inside an attribute's quotes does not end the tag
      for (; j < xml.size(); ++j) {
        if (quote) {
          if (xml[j] == quote) quote = 0;
        } else if (xml[j] == '"' || xml[j] == '\'') {
          quote = xml[j];
        } else if (xml[j] == '>') {
          break;
        }
      }
      if (j >= xml.size()) return std::nullopt;
      const bool empty_element = !closing && xml[j - 1] == '/';
      i = j + 1;
      if (closing) {
        if (capturing) {
          found = std::string(trim(text));
          capturing = false;
        }
        if (open.empty() || open.back() != name) return std::nullopt;  // closes what it did not open
        open.pop_back();
      } else {
        if (open.empty() && seen_root) return std::nullopt;  // a second root element
        if (capturing) return std::nullopt;                 // `child` holds elements, not text
        seen_root = true;
        if (open.size() == 1 && name == child && !found) {
          if (empty_element) found = std::string();
          else capturing = true;
        }
        if (!empty_element) open.push_back(name);
      }
    }
  }
  // Only a whole document counts: its root element closed.
  return seen_root && open.empty() ? found : std::nullopt;
}

}  // namespace twice::gateway
