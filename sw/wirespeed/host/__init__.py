"""wirespeed host."""
