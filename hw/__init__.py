"""Board support: one module per board (``hw/<board>.py`` defining ``BOARD``) and the
registry :mod:`wirespeed.hw.boards`. See hw/README.md."""
