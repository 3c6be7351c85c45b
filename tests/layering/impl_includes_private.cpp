// Compiled with impl/'s include paths; must fail: handlers see only twice/.
#include "sim/scheduler.h"
