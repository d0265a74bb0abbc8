/// \file
/// Moved to <corio/json/schema.hpp> (the json layer, below http and mcp); this
/// path keeps working until 1.0.
#pragma once

#include <corio/json/schema.hpp>
