"""The null memory: remembers nothing. The floor every system must beat."""


class NullMemory:
    """Accepts turns and forgets them."""

    def add(self, text: str) -> None:
        """Forget the text."""

    def recall(self, question: str) -> list[str]:
        """Nothing is ever recalled."""
        return []
