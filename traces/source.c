#include "config.h"
#include "source.h"
