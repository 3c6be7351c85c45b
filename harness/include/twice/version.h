// The version of the handler API, as a plugin sees it.
//
// TWICE_API_VERSION changes whenever a handler compiled against these headers
// could not safely run in a `twice` built from different ones (a virtual
// function added to Env, a field added to Notify, ...). Every translation unit
// that includes this header carries an exported `twice_plugin_api_version()`
// returning the version it was compiled against; `twice run --plugin` reads it
// right after loading the library and refuses a mismatch before it uses any
// handler. Registration (TWICE_REGISTER_HANDLER) passes the same version, so a
// mismatched plugin's static registrations are refused too.
//
// TWICE_API_VERSION_OVERRIDE exists only so that twice's own tests can build a
// plugin that claims another version; never set it in real code.
// Plain macros and one pure function; safe from any thread.
#pragma once

#ifdef TWICE_API_VERSION_OVERRIDE
#define TWICE_API_VERSION TWICE_API_VERSION_OVERRIDE
#else
#define TWICE_API_VERSION 4  // 2: Notify::refund_amount, Schema::reversals_sql; 3: Schema::states, Db::engine(), Schema per engine;
                              // 4: Env::call() (external services), Handler::jobs()
                              // (twice/wire.h came later without a change: see there why a plugin stays safe)
#endif

// Weak: every translation unit of a plugin defines it and the linker keeps
// one; default visibility, so that dlsym() finds it even in a library built
// with -fvisibility=hidden.
extern "C" __attribute__((weak, visibility("default"))) int twice_plugin_api_version() { return TWICE_API_VERSION; }
