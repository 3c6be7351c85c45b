// One file of a plugin compiled against another twice API version than the
// rest (a stale object file in a user's build: the plugin's other sources were
// rebuilt, this one was not). Linked after sample_plugin.cpp, so the plugin's
// twice_plugin_api_version() answers the current version and the library
// passes the loader's first check; only this file's registration carries the
// old version, and `twice` must refuse it by that version.
// Built by tests/library with TWICE_API_VERSION_OVERRIDE=999 for this file only.
#include "twice/handler.h"

namespace {

class StaleHandler final : public twice::Handler {
 public:
  twice::Reply handle(const twice::Notify&, twice::Env&) override { return twice::Reply::success(); }
};

}  // namespace

TWICE_REGISTER_HANDLER(StaleHandler, "plugin-stale", "from a stale object file: must never be registered");
