// How untrusted text (handler SQL, payloads, scenario and handler names) is
// made inert in each output language the report writers produce. Every string
// that comes from a run goes through exactly one of these before it is
// written; none of them ever throws, and all are pure functions, safe to call
// from any thread.
//
// Each function first repairs the text: invalid UTF-8 becomes U+FFFD, C0
// control characters other than tab and newline (and DEL) become a visible
// "\xNN", and C1 controls and bidirectional formatting characters (U+202E,
// which reverses how the rest of a line reads) a visible "\uNNNN", so what a
// reader sees is what the run did, and no consumer chokes on bytes its format
// forbids (XML 1.0 rejects most of them outright).
#pragma once

#include <string>
#include <string_view>

namespace twice::reports {

// The repair step alone: valid UTF-8, controls except '\t' and '\n' made visible.
std::string printable_utf8(std::string_view s);

// Text for a terminal, from an untrusted source (a scenario's names, a
// payload): a newline becomes "\n", other control characters "\xNN", C1
// controls (U+009B is CSI) and bidirectional formatting characters "\uNNNN",
// so that it stays on its line, cannot move the cursor or change colours, and
// reads in the order it was written; invalid UTF-8 becomes U+FFFD.
std::string terminal_text(std::string_view s);

// HTML and SVG text and attribute values (quoted with either quote).
std::string html_escape(std::string_view s);

// XML character data and attribute values. Attributes keep newlines and tabs
// as character references, so a parser hands them back unchanged.
std::string xml_escape_text(std::string_view s);
std::string xml_escape_attribute(std::string_view s);
// A complete CDATA section; "]]>" inside is split across two sections.
std::string xml_cdata(std::string_view s);

// GitHub-flavoured Markdown inline text, safe inside a table cell, a list
// item or a quote: markup characters become entity references (which no
// Markdown rule reinterprets and which contain no '|'), and so does a leading
// character that would open a nested block ("1.", "-", "+", indentation);
// newlines become <br>.
std::string markdown_text(std::string_view s);
// Inline code inside a table cell: <code> holding markdown_text(s).
std::string markdown_cell_code(std::string_view s);
// A fenced code block whose fence is longer than any backtick run in `s`.
std::string markdown_code_block(std::string_view s, std::string_view info = "");
// An inline code span outside tables, fenced by enough backticks.
std::string markdown_code_span(std::string_view s);

// Text of a Mermaid sequence-diagram message, note or participant alias: one
// line, everything but letters, digits, spaces and a few harmless marks as
// Mermaid entity codes ("#59;"), which Mermaid decodes only when drawing.
std::string mermaid_text(std::string_view s);

// At most `max_chars` code points of `s`, ending in an ellipsis when cut.
std::string truncate_utf8(std::string_view s, std::size_t max_chars);

}  // namespace twice::reports
