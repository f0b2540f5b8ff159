// remote uses none of the engine.
#include "weir/engine.h"
