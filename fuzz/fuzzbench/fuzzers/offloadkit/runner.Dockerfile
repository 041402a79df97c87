FROM gcr.io/fuzzbench/base-image
