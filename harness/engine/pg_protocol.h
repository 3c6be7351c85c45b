// What every PostgreSQL connection of twice shares: the `?` placeholders of
// the Db API turned into PostgreSQL's `$n`, Values sent as text, a PGresult
// read back as a Result, and SQLSTATEs mapped onto Status codes.
// Pure functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <libpq-fe.h>

#include "twice/db.h"

namespace twice::engine {

// "?" -> "$1", "$2", ... in order; "?N" -> "$N". Question marks inside string
// literals, quoted identifiers and comments are left alone.
std::string to_dollar_placeholders(std::string_view sql);

// `sql` with each ? / ?N replaced by its parameter as a literal, so that
// several statements travel in one round trip (the per-run reset). Strings
// are quoted for standard_conforming_strings = on, PostgreSQL's default.
std::string inline_parameters(std::string_view sql, const std::vector<Value>& params);

// Parameters as libpq's text format: a null pointer for NULL. `storage` holds
// the text the pointers point into.
std::vector<const char*> text_params(const std::vector<Value>& params, std::vector<std::string>& storage);

// SQLSTATE -> Status: class 23 a constraint, 40001 a serialization failure,
// 40P01 a deadlock, 55P03 a lock timeout, anything else an error. The message
// is the server's primary message.
Status status_from_sqlstate(std::string_view sqlstate, std::string message);

// The outcome of one statement. `result` may be null (the connection broke).
// Integer, boolean and whole numeric columns read as integers, float columns
// as reals, the rest as text; changes is the command tag's row count for
// INSERT/UPDATE/DELETE (rows matched, PostgreSQL's own meaning).
Result to_result(PGconn* conn, PGresult* result);

}  // namespace twice::engine
