// Writes the reports of one matrix run into a folder, for people and CI:
// twice-report.md (job summary), twice-report.json (tools), twice-report.junit.xml
// (test-result viewers) and twice-report.html (a person with a browser).
// Each file is written to a temporary name in the same folder and renamed
// over the old one, so a reader never sees half a report. Call from one
// thread per folder.
#pragma once

#include <string>
#include <vector>

#include "results/model.h"
#include "twice/status.h"

namespace twice::reports {

// "md", "json", "junit", "html": the formats, in the order they are written.
const std::vector<std::string>& report_formats();
// "twice-report.md" for "md", and so on; empty for an unknown format.
std::string report_file_name(const std::string& format);

// Writes each of `formats` (an empty list: all) into `dir`, creating it. A
// file that cannot be written does not stop the others: the error names each
// that failed. The paths written are appended to `written` when it is given,
// also on failure. A report of another format left there by an earlier run
// (twice's own file names only) is removed, so that the folder never shows
// one run's verdict beside another's; its path is appended to `removed`.
Status write_reports(const results::MatrixResult& m, const std::string& dir, const std::vector<std::string>& formats,
                     std::vector<std::string>* written = nullptr, std::vector<std::string>* removed = nullptr);

// Writes `content` to `path` atomically (a temporary file renamed over it).
// An error names the file and the reason.
Status write_file_atomically(const std::string& path, const std::string& content);

}  // namespace twice::reports
