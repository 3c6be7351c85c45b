// Compiled with reports/' include paths; must fail: writers see only the result model.
#include "explore/explorer.h"
