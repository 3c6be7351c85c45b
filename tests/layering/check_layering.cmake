cmake_minimum_required(VERSION 3.25)
# A tiny harness of two folders where env/ includes check/, though env may
# include only sim/: twice_check_layering must stop with a message naming the
# file. Then the same tree with the include allowed must pass.
include(${LAYERING})
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/env ${WORK}/check ${WORK}/sim)
file(WRITE ${WORK}/env/db.cpp "#include \"env/db.h\"\n#include \"sim/clock.h\"\n#include \"check/checker.h\"\n")
file(WRITE ${WORK}/check/checker.h "// nothing\n")
twice_check_layering(${WORK} check "env")  # check may include env: passes
twice_check_layering(${WORK} env "sim")    # env may not include check: stops here
message(FATAL_ERROR "the layering check let harness/env/db.cpp include check/")
