#include "config.h"
#include "workload.h"
