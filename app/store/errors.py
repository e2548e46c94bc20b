"""The store's user-facing error: the application's one ``UserError`` (``app.errors``), so pages
and JSON replies show every error the same way."""
from ..errors import UserError


class StoreError(UserError):
    """A title, filter or run the store refuses."""
