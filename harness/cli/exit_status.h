// The exit statuses every `twice` command shares (README, "Exit status"):
// scripts and CI branch on them, so each has one name. What 1 means is each
// command's own (the matrix differs, the replay shows a violation, the stress
// run saw one), so the commands name it themselves.
#pragma once

namespace twice::cli {

// A usage or input error; the message names the file, line and fix.
inline constexpr int kExitUsage = 2;
// Not the user's doing: a bug in twice (or the machine) to report, which a
// CI script should not mistake for a mistyped option.
inline constexpr int kExitInternal = 3;
// Ctrl-C (128 + SIGINT, as a shell reports it).
inline constexpr int kExitInterrupted = 130;

}  // namespace twice::cli
