#include "tlm_interconnect/memory_events.h"
