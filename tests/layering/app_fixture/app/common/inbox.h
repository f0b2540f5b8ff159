#pragma once
// common is below every other app folder.
#include "app/server/http_request.h"
