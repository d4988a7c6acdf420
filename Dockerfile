# The image compose.yaml runs as web, cluster and watcher (one image, three commands).
FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    MEMORY_DATA_DIR=/data MEMORY_INBOX_DIR=/inbox
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN useradd --create-home memory && mkdir -p /data /inbox && chown memory /data /inbox
USER memory
EXPOSE 8000
CMD ["gunicorn", "memoryagent.wsgi", "--bind", "0.0.0.0:8000", "--workers", "2", "--timeout", "120", "--access-logfile", "-", "--no-control-socket"]
