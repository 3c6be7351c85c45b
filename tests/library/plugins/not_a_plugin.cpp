// A shared library that is not a twice plugin: no twice headers, no handlers.
extern "C" int not_a_twice_plugin() { return 42; }
