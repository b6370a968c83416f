#include "config.h"
#include "cache.h"
