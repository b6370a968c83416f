#include "config.h"
#include "text.h"
