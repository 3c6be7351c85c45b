// Schema: the tables a handler works on, how a run seeds them, and the oracle
// queries the checker reads them with after the run.
//
// The bundled handlers use reference_schema(): orders, accounts, ledger (one
// row per credit) and callback_log. A handler that brings its own tables
// returns its own Schema from Handler::schema(). The checker never asks the
// handler anything: it runs these queries on the database the handler wrote,
// so a handler's schema only has to say where the truth is kept.
// Plain data; safe to share between threads.
#pragma once

#include <string>

#include "twice/engine.h"

namespace twice {

struct Schema {
  // Run once on the empty database: CREATE TABLE ... (several statements allowed).
  std::string setup_sql;
  // Seeds one order waiting for payment. Parameters: ?1 order_no, ?2 user, ?3 amount, ?4 currency.
  std::string insert_order_sql;
  // Seeds one account with a zero balance, once per user. Parameter: ?1 user.
  std::string insert_account_sql;

  // Oracle queries (no parameters), run after quiescence:
  // rows (order_no TEXT, credits INTEGER[, source TEXT]): how many times
  // each order was credited. An order on several rows (a row per table that
  // records credits, say) counts the largest; the optional third column
  // names where a row's count was kept ('ledger', 'rebates'), for the
  // sentence of a double credit whose rows disagree. At every ack the checker reads one
  // order's rows of it (the query inside a CTE, filtered on its first
  // column): a query with one level of GROUP BY lets SQLite filter each
  // table's scan, so the check costs one order's rows, not every order's.
  std::string credits_sql;
  // rows (user TEXT, balance INTEGER, credited INTEGER): each account's balance,
  // and the sum of the credits recorded for it.
  std::string balances_sql;

  // Optional oracle queries; an empty one switches its invariant off.
  // rows (order_no TEXT): orders flagged for refund (a payment the merchant
  // must return, e.g. one that arrived after the order was closed). Empty: no
  // order is ever flagged, so an order paid twice (the bundled paid-twice)
  // loses its second payment, as it would for a merchant with no way to
  // return one: lost_payment says so.
  std::string refunds_sql;
  // rows (order_no TEXT, status TEXT): each order's final status.
  std::string statuses_sql;
  // rows (order_no TEXT, from_status TEXT, to_status TEXT): every status change,
  // in order (the reference schema keeps them with a trigger).
  std::string transitions_sql;
  // rows (order_no TEXT): orders whose callback's raw payload is stored.
  std::string payloads_sql;
  // rows (order_no TEXT, reversals INTEGER): how many times each order's credit
  // was taken back because the gateway refunded its payment. Needed by
  // scenarios with refunds; credits_sql must not count these rows as credits.
  std::string reversals_sql;

  // setup_sql in the dialect of each server engine. Empty: the schema does
  // not run there (twice says so). The seeding and oracle queries above are
  // shared, so write them in SQL every engine takes (? placeholders work
  // everywhere; a subquery in FROM needs an alias on PostgreSQL).
  std::string postgres_setup_sql;
  std::string mariadb_setup_sql;

  // The setup SQL for `engine` (setup_sql for SQLite).
  const std::string& setup_sql_for(Engine engine) const {
    switch (engine) {
      case Engine::kPostgres: return postgres_setup_sql;
      case Engine::kMariadb: return mariadb_setup_sql;
      case Engine::kSqlite: break;
    }
    return setup_sql;
  }
  // The order state machine the checker judges statuses_sql and
  // transitions_sql by (illegal_transition), in this schema's own words:
  //   waiting -> paid | closed;  paid -> refunded;
  //   closed -> refunded, or -> paid only when refunds_sql flags the order
  //   (a late payment kept to be returned).
  // Any other change is illegal, and so is a credit on an order whose final
  // status is `closed`. A schema whose status column says e.g. "UNPAID" and
  // "SUCCESS" names them here.
  struct OrderStates {
    std::string waiting = "WAIT_PAY";
    std::string paid = "PAID";
    std::string closed = "CLOSED";
    std::string refunded = "REFUNDED";
  };
  OrderStates states;
};

// orders, accounts, ledger, callback_log: see harness/env/schema.cpp.
const Schema& reference_schema();

}  // namespace twice
