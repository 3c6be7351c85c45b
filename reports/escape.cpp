#include "escape.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "text/utf8.h"

namespace twice::reports {
namespace {

using text::append_utf8;

constexpr char32_t kReplacement = 0xFFFD;

// Decodes one code point at s[i], advancing i; malformed input (overlong,
// surrogate, out of range, truncated) yields U+FFFD and skips one byte.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int len = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) len = 2, cp = b0 & 0x1F, min = 0x80;
  else if ((b0 & 0xF0) == 0xE0) len = 3, cp = b0 & 0x0F, min = 0x800;
  else if ((b0 & 0xF8) == 0xF0) len = 4, cp = b0 & 0x07, min = 0x10000;
  else {
    ++i;
    return kReplacement;
  }
  if (i + static_cast<std::size_t>(len) > s.size()) {
    ++i;
    return kReplacement;
  }
  for (int k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return kReplacement;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return kReplacement;
  }
  i += static_cast<std::size_t>(len);
  return cp;
}

// Code points that act on the text around them instead of showing: the C1
// controls (U+009B is a terminal's CSI, as ESC [ is) and the bidirectional
// formatting characters, which reorder how the rest of a line reads (a
// U+202E makes "evil" show as "live").
bool acts_unseen(char32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

// Calls emit(cp) for each code point of the repaired text; controls arrive
// already spelled out as "\xNN" or "\uNNNN" (one call per character of the
// spelling).
template <typename Emit>
void for_each_printable(std::string_view s, Emit&& emit) {
  std::size_t i = 0;
  while (i < s.size()) {
    char32_t cp = next_code_point(s, i);
    if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7F) {
      for (char ch : fmt::format("\\x{:02x}", static_cast<unsigned>(cp))) emit(static_cast<char32_t>(ch));
      continue;
    }
    if (acts_unseen(cp)) {
      for (char ch : fmt::format("\\u{:04x}", static_cast<unsigned>(cp))) emit(static_cast<char32_t>(ch));
      continue;
    }
    if (cp == 0xFFFE || cp == 0xFFFF) cp = kReplacement;  // not characters in XML
    emit(cp);
  }
}

std::string numeric_reference(char32_t cp) { return fmt::format("&#{};", static_cast<std::uint32_t>(cp)); }

}  // namespace

std::string printable_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_printable(s, [&](char32_t cp) { append_utf8(out, cp); });
  return out;
}

std::string terminal_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const char32_t cp = next_code_point(s, i);
    if (cp == '\n') out += "\\n";
    else if (cp < 0x20 || cp == 0x7f) out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    else if (acts_unseen(cp)) out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
    else append_utf8(out, cp);
  }
  return out;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for_each_printable(s, [&](char32_t cp) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: append_utf8(out, cp);
    }
  });
  return out;
}

std::string xml_escape_text(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for_each_printable(s, [&](char32_t cp) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: append_utf8(out, cp);
    }
  });
  return out;
}

std::string xml_escape_attribute(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for_each_printable(s, [&](char32_t cp) {
    switch (cp) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += "&#10;"; break;  // a literal newline would be normalised to a space
      case '\t': out += "&#9;"; break;
      default: append_utf8(out, cp);
    }
  });
  return out;
}

std::string xml_cdata(std::string_view s) {
  const std::string text = printable_utf8(s);
  std::string out = "<![CDATA[";
  std::size_t from = 0;
  for (std::size_t at = text.find("]]>"); at != std::string::npos; at = text.find("]]>", from)) {
    // End the section between "]]" and ">", and open a new one for the rest.
    out.append(text, from, at + 2 - from);
    out += "]]><![CDATA[";
    from = at + 2;
  }
  out.append(text, from);
  out += "]]>";
  return out;
}

std::string markdown_text(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  bool first = true;
  for_each_printable(s, [&](char32_t cp) {
    // At the start of a list item or quote, these would open a nested block
    // (a list, a setext underline, indented code); inside a line they are text.
    const bool block_marker = cp == '-' || cp == '+' || cp == '=' || cp == ' ' || (cp >= '0' && cp <= '9');
    if (first && block_marker) {
      out += numeric_reference(cp);
      first = false;
      return;
    }
    first = false;
    switch (cp) {
      case '\n': out += "<br>"; break;
      case '\t': out += "&#9;"; break;
      // What GFM tables, emphasis, code, links, math, mentions or inline HTML
      // could read as markup; an entity reference is always literal text.
      case '&': case '<': case '>': case '|': case '\\': case '`': case '*': case '_': case '[': case ']':
      case '~': case '$': case '@': case '#':
        out += numeric_reference(cp);
        break;
      default: append_utf8(out, cp);
    }
  });
  return out;
}

std::string markdown_cell_code(std::string_view s) { return "<code>" + markdown_text(s) + "</code>"; }

std::string markdown_code_block(std::string_view s, std::string_view info) {
  const std::string text = printable_utf8(s);
  std::size_t longest = 0;
  std::size_t run = 0;
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  std::string out = fence + std::string(info) + "\n" + text;
  if (!text.empty() && text.back() != '\n') out += '\n';
  return out + fence + "\n";
}

std::string markdown_code_span(std::string_view s) {
  std::string text = printable_utf8(s);
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::size_t longest = 0;
  std::size_t run = 0;
  for (char ch : text) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  // CommonMark strips one space from each end, so a padded span may begin or
  // end with a backtick without merging into the fence.
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`' || text.front() == ' ');
  return fence + (pad ? " " : "") + text + (pad ? " " : "") + fence;
}

std::string mermaid_text(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  for_each_printable(s, [&](char32_t cp) {
    const bool plain = (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') ||
                       cp == ' ' || cp == '.' || cp == '_' || cp == '\'' || cp == '(' || cp == ')' || cp == '=' ||
                       cp == '*' || cp == '/' || cp == '!' || cp == '?' || cp == '@' || cp == '$' || cp >= 0x80;
    if (cp == '\n' || cp == '\t') out += ' ';
    else if (plain) append_utf8(out, cp);
    else out += fmt::format("#{};", static_cast<std::uint32_t>(cp));
  });
  // Mermaid trims; an empty message is a syntax error.
  if (out.find_first_not_of(' ') == std::string::npos) return "#160;";
  return out;
}

std::string truncate_utf8(std::string_view s, std::size_t max_chars) {
  std::size_t end = 0;       // byte offset after max_chars - 1 code points
  std::size_t i = 0;
  std::size_t count = 0;
  while (i < s.size()) {
    if (count + 1 == max_chars) end = i;
    if (count == max_chars) return std::string(s.substr(0, end)) + "\u2026";
    next_code_point(s, i);
    ++count;
  }
  return std::string(s);
}

}  // namespace twice::reports
