// Compiled with reports/' include paths; must compile.
#include "results/model.h"
#include "twice/version.h"
#include "text/utf8.h"
