// placeholder
#include "hook_fixture.h"
