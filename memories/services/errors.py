"""What the services refuse, by what was asked: each message says why and is safe to show."""


class RefusedError(ValueError):
    """A request a service turned down. `field` names the value it is about, when it is
    about one, so a form can show it there."""

    def __init__(self, message: str, *, field: str = ""):
        super().__init__(message)
        self.field = field


class IngestError(RefusedError):
    """The input was refused."""


class EditError(RefusedError):
    """A correction was refused: a field that cannot be edited, or a value that is not valid."""


class RestoreError(RefusedError):
    """A deleted memory cannot come back as it is (its content is stored again meanwhile)."""


class QuestionError(RefusedError):
    """Nothing to ask: the question is blank once its whitespace is squeezed out."""


class RetryError(RefusedError):
    """Only a failed memory of the caller's can be extracted again."""
