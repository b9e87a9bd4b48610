"""ways sensors: hook-driven session records dispatched to external consumers.

Kept empty on purpose: `ways --version` and the hook's fast path import this
package, so nothing here may import anything.
"""

__version__ = "0.1.0"
