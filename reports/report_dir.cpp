#include "report_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "html_report.h"
#include "json_report.h"
#include "junit_report.h"
#include "markdown_report.h"

namespace twice::reports {

const std::vector<std::string>& report_formats() {
  static const std::vector<std::string> formats{"md", "json", "junit", "html"};
  return formats;
}

std::string report_file_name(const std::string& format) {
  if (format == "md") return "twice-report.md";
  if (format == "json") return "twice-report.json";
  if (format == "junit") return "twice-report.junit.xml";
  if (format == "html") return "twice-report.html";
  return {};
}

Status write_file_atomically(const std::string& path, const std::string& content) {
  // The process id keeps two writers of the same folder off each other's
  // temporary file; the rename decides which complete report stays.
  const std::string tmp = fmt::format("{}.{}.tmp", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Status::error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    out << content;
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      return Status::error(fmt::format("{}: write failed", path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return Status::error(fmt::format("{}: cannot replace the file: {}", path, why));
  }
  return Status::OK();
}

Status write_reports(const results::MatrixResult& m, const std::string& dir, const std::vector<std::string>& formats,
                     std::vector<std::string>* written, std::vector<std::string>* removed) {
  const std::vector<std::string>& wanted = formats.empty() ? report_formats() : formats;
  for (const auto& f : wanted)
    if (report_file_name(f).empty())
      return Status::error(fmt::format("unknown report format '{}'; known: md, json, junit, html", f));

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::error(fmt::format("{}: cannot create the report folder: {}", dir, ec.message()));

  // One that cannot be written does not keep the others from being written.
  std::string failed;
  for (const auto& f : report_formats()) {
    const std::string path = (std::filesystem::path(dir) / report_file_name(f)).string();
    if (std::find(wanted.begin(), wanted.end(), f) == wanted.end()) {
      // An earlier run's report of a format this run does not write.
      std::error_code gone;
      if (std::filesystem::is_regular_file(path, gone) && std::filesystem::remove(path, gone) && removed)
        removed->push_back(path);
      continue;
    }
    Status s;
    if (f == "json") s = write_json(m, path);
    else if (f == "md") s = write_file_atomically(path, render_markdown(m));
    else if (f == "junit") s = write_file_atomically(path, render_junit(m));
    else s = write_file_atomically(path, render_html(m));
    if (!s.ok()) {
      failed += (failed.empty() ? "" : "; ") + s.message();
      continue;
    }
    if (written) written->push_back(path);
  }
  return failed.empty() ? Status::OK() : Status::error(failed);
}

}  // namespace twice::reports
