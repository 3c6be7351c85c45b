// ServiceProcess: the service under test when twice starts it itself
// (--endpoint-command), so that it can kill it with SIGKILL at random moments
// and start it again, as Jepsen's nemesis does, while the gateway keeps
// retrying. The command runs as `sh -c 'exec COMMAND'` in its own process
// group, stdin from /dev/null, stdout and stderr to a log file; it
// dies with twice (PR_SET_PDEATHSIG) and with this object (SIGKILL to its
// group), so no exit path leaves it running.
// Not thread-safe; call from the thread that created it, and keep that thread
// alive while the service runs (the kernel ties PR_SET_PDEATHSIG to it).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "blackbox/loopback.h"
#include "twice/status.h"
#include "twice/time.h"

namespace twice::blackbox {

class ServiceProcess {
 public:
  // Starts `command` and waits until the endpoint answers (any HTTP status)
  // or `ready_timeout` passes. Refuses to start it when something already
  // listens on the endpoint's port (that would be tested instead of the
  // service, and outlive every kill), at the first start and at each
  // restart. The log is truncated at the first start. An error names the
  // command and shows the end of its log when it exits first or never answers.
  static Status start(const std::string& command, const HttpEndpoint& endpoint, const std::string& log_path,
                      Micros ready_timeout, std::unique_ptr<ServiceProcess>& out);
  ~ServiceProcess();
  ServiceProcess(const ServiceProcess&) = delete;
  ServiceProcess& operator=(const ServiceProcess&) = delete;

  // SIGKILL to the service's process group; returns once it is reaped.
  void kill9();
  // Starts it again after kill9() and waits until it answers.
  Status restart();
  int kills() const { return kills_; }
  const std::string& log_path() const { return log_path_; }

 private:
  ServiceProcess(std::string command, HttpEndpoint endpoint, std::string log_path, Micros ready_timeout)
      : command_(std::move(command)), endpoint_(std::move(endpoint)), log_path_(std::move(log_path)),
        ready_timeout_(ready_timeout) {}
  Status spawn_and_wait();

  std::string command_;
  HttpEndpoint endpoint_;
  std::string log_path_;
  Micros ready_timeout_;
  pid_t pid_ = -1;
  int kills_ = 0;
  bool started_ = false;  // it answered once: later starts are restarts
};

}  // namespace twice::blackbox
