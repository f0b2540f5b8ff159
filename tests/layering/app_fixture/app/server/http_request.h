#pragma once
// One of the server's own headers.
