"""The store's user-facing error: the same shape as the engine's ``ScenarioError`` (``field``,
``message``, ``allowed``), so pages and JSON replies show every error the same way."""


class StoreError(ValueError):
    def __init__(self, field, message, allowed=None):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
        self.allowed = allowed

    def to_dict(self):
        return {"field": self.field, "message": self.message, "allowed": self.allowed}
