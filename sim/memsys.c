#include "config.h"
#include "memsys.h"
