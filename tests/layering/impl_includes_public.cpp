// Compiled with impl/'s include paths; must compile.
#include "twice/handler.h"
#include "twice/job.h"
