# Sourced by the other tools: where R packages go. Root installs into R's default library;
# anyone else into their own library, R_LIBS_USER (created when missing), which R then puts
# first on .libPaths().
if [ "$(id -u)" = 0 ]; then
  MKLEARN_LIB=$(Rscript -e 'cat(.libPaths()[1])')
else
  MKLEARN_LIB=$(Rscript -e 'cat(path.expand(Sys.getenv("R_LIBS_USER")))')
  if [ -z "$MKLEARN_LIB" ]; then
    echo "R_LIBS_USER is empty: set it to a directory of your own" >&2
    exit 1
  fi
  mkdir -p "$MKLEARN_LIB"
  export R_LIBS_USER="$MKLEARN_LIB"
fi
export MKLEARN_LIB
