// A folder of app/ that no layer names.
#include "weir/engine.h"
