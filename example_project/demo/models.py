from django.db import models


class Book(models.Model):
    """A book in the demo catalogue, read by the demo MCP tools and resources."""

    title = models.CharField(max_length=200)
    author = models.CharField(max_length=200)
    year = models.PositiveIntegerField()
    summary = models.TextField(blank=True)

    class Meta:
        ordering = ["title"]
        permissions = [("curate_book", "Can curate books (the demo's curate_book tool)")]

    def __str__(self) -> str:
        return f"{self.title} ({self.author}, {self.year})"
