// ServiceDatabase: the database of the service under test (--db), opened by
// twice to seed it before each run and to read the oracle queries after it.
// A SQLite file (created if missing), postgres://... or mysql://... on
// loopback or a Unix socket. Owns its one connection; used from one thread
// at a time (the runner's, while no request is in flight for seeding and
// checking).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <sqlite3.h>

#include "env/raw_connection.h"
#include "gateway/scenario.h"
#include "twice/schema.h"
#include "twice/status.h"

namespace twice::blackbox {

class ServiceDatabase {
 public:
  // Opens `db`. A non-loopback host, an unreadable file or a refused
  // connection is an error Status of one line naming --db.
  static Status open(const std::string& db, std::unique_ptr<ServiceDatabase>& out);
  ~ServiceDatabase();
  ServiceDatabase(const ServiceDatabase&) = delete;
  ServiceDatabase& operator=(const ServiceDatabase&) = delete;

  env::RawConnection& connection() { return *raw_; }

  // Runs the oracle's setup SQL (which must leave the tables as a fresh run
  // needs them: DROP ... IF EXISTS, then CREATE), then seeds every order of
  // the scenario waiting for payment and each of their users' accounts once.
  // A failure names the step: "setup_sql: ...", "seeding order O-1: ...".
  Status seed(const Schema& schema, const std::vector<gateway::OrderSpec>& orders);

 private:
  ServiceDatabase() = default;
  sqlite3* sqlite_ = nullptr;  // owned, when the database is a SQLite file
  std::unique_ptr<env::RawConnection> raw_;
};

}  // namespace twice::blackbox
