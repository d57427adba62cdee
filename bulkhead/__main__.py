# SPDX-License-Identifier: Apache-2.0
import sys

from bulkhead.cli import main

sys.exit(main())
