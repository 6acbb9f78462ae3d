from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _


class Parent(AbstractUser):
    """The project's own user model."""

    nickname = models.CharField(max_length=50, blank=True)


class Note(models.Model):
    """A note of the day. Its verbose names are msgids Django's admin translates (German: "Logeintrag")."""

    KINDS = [("sleep", _("sleep")), ("meal", _("meal")), ("walk", _("walk"))]

    title = models.CharField(max_length=100)
    kind = models.CharField(max_length=10, choices=KINDS)
    year = models.PositiveIntegerField()
    author = models.ForeignKey(Parent, on_delete=models.CASCADE, related_name="notes")

    class Meta:
        ordering = ["title"]
        verbose_name = _("log entry")
        verbose_name_plural = _("log entries")

    def __str__(self) -> str:
        return self.title
