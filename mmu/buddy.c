#include "config.h"
#include "buddy.h"
