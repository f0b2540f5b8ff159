#pragma once
// Shadows the engine's header of the same name for desktop files.
