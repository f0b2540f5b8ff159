#pragma once
// The server's public surface may use common.
#include "app/common/inbox.h"
