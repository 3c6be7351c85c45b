// run_blackbox(): one run of a scenario against a real service over HTTP,
// judged from the service's own database. The counterpart of simulate() for
// a handler twice cannot load: the gateway's notifications become real POSTs
// in the profile's wire format (blackbox/wire_format.h), sent from real
// threads over loopback sockets, with the scenario's faults (duplicates,
// concurrent copies, delays that reorder, lost requests, lost acks) drawn
// from a fault plan seeded by `seed`, and the profile's timeouts and retry
// schedule on a compressed clock (time_scale). At quiescence the checker
// reads the database through the oracle file's queries against the ledger
// kept here, exactly as in simulation (check::judge).
//
// Not replayable: the seed fixes the fault plan (which copies, delays and
// losses each attempt gets), but the interleaving inside the service is the
// operating system's. What needs the harness's own view inside the service
// (ack_before_commit, accepted_invalid) is not judged; see not_judged().
//
// Threads: blocks its caller; starts a thread per notification and per
// copy of each attempt, and joins them all before judging.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "blackbox/loopback.h"
#include "blackbox/service_database.h"
#include "blackbox/query_server.h"
#include "blackbox/service_process.h"
#include "blackbox/wire_keys.h"
#include "check/checker.h"
#include "gateway/gateway.h"
#include "gateway/scenario.h"
#include "process/stop_now.h"
#include "twice/schema.h"
#include "twice/status_or.h"

namespace twice::blackbox {

struct BlackboxRun;

struct BlackboxOptions {
  HttpEndpoint endpoint;
  const gateway::Scenario* scenario = nullptr;
  const Schema* schema = nullptr;
  ServiceDatabase* database = nullptr;
  const WireKeys* keys = nullptr;
  // Virtual time runs this many times faster than the wall clock: retry gaps,
  // delays and timeouts are divided by it (100: WeChat's 24 h schedule in 15 min).
  double time_scale = 100.0;
  // A request is given at least this long to answer, however compressed the
  // clock (a real service needs real milliseconds); 0: 1 s.
  Micros min_timeout = 0;
  // A request the gateway gave up on (timed out) keeps its connection open:
  // the service may still be working on it. Before the database is read,
  // twice waits until the service has ended each one (answered it, or closed
  // its connection, as a killed service does), at most this long; one still
  // running then is BlackboxRun::still_running, and its late write could land
  // in the next run, so the caller stops there.
  Micros drain_timeout = 30 * kSecond;
  // After the last request ends, the service is given this long to finish
  // work it does after answering, before the database is read.
  Micros quiet_period = 200 * kMillisecond;
  std::uint64_t seed = 1;
  // The nemesis, when twice started the service (--endpoint-command): `kills`
  // times per run, at moments drawn from the fault plan in [0, kill_window]
  // of real time, SIGKILL the service, keep it down for the scenario's
  // restart range (compressed), and start it again; the gateway keeps
  // retrying meanwhile. Runs on the caller's thread, which started `process`.
  ServiceProcess* process = nullptr;
  int kills = 0;
  Micros kill_window = 500 * kMillisecond;
  // The gateway's query API (--query-port): answers from this run's ledger while it runs.
  QueryServer* query_server = nullptr;
  // Once stopped (a second Ctrl-C), the run ends at its next wait: no
  // attempt, copy or retry more is sent, a request on the wire is given up
  // (its connection closed), the nemesis ends, nothing is drained or judged,
  // and run_blackbox() says it stopped. Null: the run plays out.
  const process::StopNow* stop_now = nullptr;
  // Called every `progress_every` of real time while a run plays (from the
  // thread that called run_blackbox), so that a long run is not silent: how
  // long it has played, and its requests so far (BlackboxRun's counts and
  // statuses; nothing judged yet).
  std::function<void(Micros elapsed, const BlackboxRun& so_far)> on_progress;
  Micros progress_every = 60 * kSecond;
};

struct BlackboxRun {
  std::uint64_t seed = 0;
  check::Verdict verdict;
  std::vector<gateway::PaymentRecord> payments;  // the gateway's ledger
  int requests = 0;   // HTTP requests sent (copies and forged ones included)
  int answered = 0;   // requests the service answered
  int acks = 0;       // answers the profile takes as an ack
  int timed_out = 0;  // requests given no whole answer by the timeout (the gateway gave up on them)
  int broken = 0;     // answers that were not HTTP, resets, connections closed mid-answer (a killed service's too)
  int refused = 0;    // connections refused
  // Of the timed-out requests: how many the service ended while twice waited
  // for it before judging (their writes are judged), and how many it had not
  // ended after BlackboxOptions::drain_timeout (their writes may come later).
  int ended_late = 0;
  int still_running = 0;
  Micros drained = 0;  // how long twice waited for them
  std::map<int, int> statuses;  // answers by HTTP status
  std::string broken_example;   // what was wrong with the first broken answer
  std::string timeout_example;  // where the first timed-out request stopped
  int forged = 0;     // forged notifies sent (Scenario::attacks.forged_signature)
  int kills = 0;      // times the nemesis killed the service
  // What the fault plan drew for each attempt that was made, one line each
  // ("evt-O-1 attempt 1: delay 0us, lost, 2 copies (+0us, +3us), ack lost"),
  // in notification order. An attempt's draws depend on the seed alone;
  // whether a later attempt is made at all depends on the service.
  std::vector<std::string> fault_plan;
  Micros elapsed = 0;  // wall clock, from the first request's time to quiescence
};

// The request timeout of a run: the scenario's (its [gateway] timeout, else its
// profile's), compressed, at least min_timeout.
Micros request_timeout(const BlackboxOptions& options);

// Checks what the options ask for before anything is sent: a wire format for
// the scenario's profile, a sane time scale.
Status check_options(const BlackboxOptions& options);

// Seeds the database, plays the scenario, waits for the requests it gave up
// on (drain_timeout), judges. An error Status (one line) when the database
// cannot be seeded or read; a run of which no request was answered is an
// error too (the service is down, stuck, or not an HTTP server), not a
// verdict: its message starts with "nothing listens" when every connection
// was refused. A run ended by options.stop_now is an error saying so
// (kStoppedNow), not judged.
StatusOr<BlackboxRun> run_blackbox(const BlackboxOptions& options);
inline constexpr const char* kStoppedNow = "the run was stopped now, before it ended";

// What black-box mode does not judge, and why, one line each (`nemesis`:
// twice kills and restarts the service).
std::vector<std::string> not_judged(const gateway::Scenario& scenario, bool nemesis = false);

}  // namespace twice::blackbox
