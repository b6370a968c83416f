#include "config.h"
#include "physmem.h"
