#include "explore/transcript.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace twice::explore {

void build_transcript(const run::RunResult& run, const gateway::Scenario& scenario,
                      const check::Violation& violation, Counterexample& out) {
  // The orders the violation is about: the subject itself, or an account's orders.
  std::set<std::string> orders;
  for (const auto& o : scenario.orders)
    if (o.order_no == violation.subject || o.user == violation.subject) orders.insert(o.order_no);
  const bool all_tasks = orders.empty();  // "stuck" and checker errors concern the whole run

  // An external service's line concerns the orders it names, and each
  // service gets a lane of its own, after the tasks.
  auto mentions_shown_order = [&](const std::string& text) {
    if (all_tasks) return true;
    for (const auto& o : orders)
      if (text.find(o) != std::string::npos) return true;
    return false;
  };
  // A background job's task (a reconciler, an outbox relay) serves no one
  // order: it is shown when one of its steps or service calls names a shown
  // order, since its credit or its call is then part of the story.
  std::set<int> involved_jobs;
  std::vector<std::string> services;  // in the order they first act
  for (const auto& e : run.trace.events()) {
    if (e.task != 0 && e.kind != sim::TraceKind::kService) {
      auto task = run.tasks.find(e.task);
      if (task != run.tasks.end() && task->second.order_no.empty() && mentions_shown_order(e.text))
        involved_jobs.insert(e.task);
    }
    if (e.kind != sim::TraceKind::kService || !mentions_shown_order(e.text)) continue;
    involved_jobs.insert(e.task);
    const std::string name = e.text.substr(0, e.text.find(':'));
    if (std::find(services.begin(), services.end(), name) == services.end()) services.push_back(name);
  }

  std::map<int, int> column_of;
  for (const auto& [id, info] : run.tasks) {
    if (!all_tasks && !orders.count(info.order_no) && !(info.order_no.empty() && involved_jobs.count(id))) continue;
    column_of[id] = static_cast<int>(out.columns.size());
    out.columns.push_back(fmt::format("T{}: {}", id, info.name));
  }
  std::map<std::string, int> service_column;
  for (const auto& name : services) {
    service_column[name] = static_cast<int>(out.columns.size());
    out.columns.push_back(fmt::format("{} (service)", name));
  }

  out.rows.clear();
  out.gateway.clear();
  out.steps = 0;
  out.hidden_steps = 0;
  for (const auto& e : run.trace.events()) {
    const bool step = e.kind == sim::TraceKind::kSql || e.kind == sim::TraceKind::kLock ||
                      e.kind == sim::TraceKind::kClock || e.kind == sim::TraceKind::kCall;
    if (e.task == 0) {
      // Gateway lines that mention one of the orders shown.
      bool relevant = all_tasks;
      for (const auto& o : orders) relevant |= e.text.find(o) != std::string::npos;
      if (relevant) out.gateway.push_back(sim::format_event(e));
      continue;
    }
    if (e.kind == sim::TraceKind::kService) {
      // What the service applied, in its own lane; the call itself is the caller's step.
      if (!mentions_shown_order(e.text)) continue;
      const std::size_t colon = e.text.find(':');
      const std::string name = e.text.substr(0, colon);
      const std::string what = colon == std::string::npos ? e.text : e.text.substr(colon + 2);
      out.rows.push_back(TranscriptRow{service_column.at(name), format_time(e.time), sim::kind_name(e.kind),
                                       fmt::format("{}: {}", sim::task_label(e.task), what), e.result, false});
      continue;
    }
    auto it = column_of.find(e.task);
    if (it == column_of.end()) {
      if (step) ++out.hidden_steps;
      continue;
    }
    if (step) ++out.steps;
    out.rows.push_back(TranscriptRow{it->second, format_time(e.time), sim::kind_name(e.kind), e.text, e.result, step});
  }

  out.effects.clear();
  for (const auto& e : run.effects) {
    if (!all_tasks && !orders.count(e.order_no)) continue;
    auto it = std::find_if(out.effects.begin(), out.effects.end(), [&](const EffectRecord& r) {
      return r.order_no == e.order_no && r.effect == e.effect;
    });
    if (it == out.effects.end()) {
      out.effects.push_back(EffectRecord{e.order_no, e.service, e.effect, {}, false});
      it = std::prev(out.effects.end());
    }
    it->applied.push_back(fmt::format("{} at {}{}", sim::task_label(e.task), format_time(e.at),
                                      e.key.empty() ? "" : " key " + e.key));
  }
  for (const auto& o : scenario.orders) {
    if (!o.paid || (!all_tasks && !orders.count(o.order_no))) continue;
    for (const auto& effect : scenario.required_effects) {
      auto it = std::find_if(out.effects.begin(), out.effects.end(), [&](const EffectRecord& r) {
        return r.order_no == o.order_no && r.effect == effect;
      });
      if (it != out.effects.end()) {
        it->required = true;
        continue;
      }
      std::string service;
      for (const auto& s : gateway::services_of(scenario))
        if (std::find(s.effects.begin(), s.effects.end(), effect) != s.effects.end()) service = s.name;
      out.effects.push_back(EffectRecord{o.order_no, service, effect, {}, true});
    }
  }

  out.balances.clear();
  for (const auto& a : run.verdict.accounts) {
    if (!all_tasks && a.user != violation.subject) {
      bool shown = false;
      for (const auto& o : scenario.orders) shown |= o.user == a.user && orders.count(o.order_no);
      if (!shown) continue;
    }
    std::string line = fmt::format("{}: balance {}, ledger credits {}, should be {}", a.user, a.balance,
                                   a.ledger_sum, a.should_be);
    if (a.balance != a.should_be || a.ledger_sum != a.should_be) line += "  <-- wrong";
    out.balances.push_back(std::move(line));
  }
}

}  // namespace twice::explore
