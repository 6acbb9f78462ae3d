from django.contrib import admin
from django.contrib.auth.admin import UserAdmin

from .models import Note, Parent

admin.site.register(Parent, UserAdmin)
admin.site.register(Note)
